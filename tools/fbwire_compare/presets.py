# SPDX-License-Identifier: MIT
"""Presets: filled in below."""


def main(argv, here):
    return 2
