"""Reads config.ini and prints where the server would listen."""

import configparser


def load(path="config.ini"):
    config = configparser.ConfigParser()
    config.read(path)
    return config


if __name__ == "__main__":
    server = load()["server"]
    print(f"listening on {server['host']}:{server['port']}")
