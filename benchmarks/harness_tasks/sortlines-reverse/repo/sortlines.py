"""Print the lines of standard input in sorted order."""

import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--unique", action="store_true", help="drop repeated lines")
    args = parser.parse_args(argv)
    lines = sys.stdin.read().splitlines()
    if args.unique:
        lines = list(dict.fromkeys(lines))
    for line in sorted(lines):
        print(line)


if __name__ == "__main__":
    main()
