"""Count the lines of a file: python countlines.py FILE"""

import argparse


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("file")
    args = parser.parse_args(argv)
    with open(args.file, encoding="utf-8") as handle:
        lines = handle.read().splitlines()
    print(len(lines))


if __name__ == "__main__":
    main()
