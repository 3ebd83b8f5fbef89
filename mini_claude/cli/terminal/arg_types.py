"""Argument types the command lines share: each turns a word into a value or raises argparse's own error, which
argparse prints as a usage error (exit 2) naming the option."""

from __future__ import annotations

import argparse

__all__ = ["positive_int", "seconds"]

MAX_SECONDS = 3600


def seconds(text: str) -> float:
    """A duration: more than 0, at most an hour."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds") from None
    if not 0 < value <= MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be more than 0 and at most {MAX_SECONDS}, not {text}")
    return value


def positive_int(text: str) -> int:
    """A whole number of at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value
