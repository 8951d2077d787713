"""A tiny command-line greeter: the sample project of SF's offline demo."""

import argparse


def greet(name: str) -> str:
    return f"Hello, {name}!"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Greet someone.")
    parser.add_argument("name")
    args = parser.parse_args(argv)
    print(greet(args.name))


if __name__ == "__main__":
    main()
