"""What the tests of loadscripts/sutlab_lab share: the library on sys.path, the captured tool outputs."""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "loadscripts"))
DATA = os.path.join(ROOT, "tests", "data", "loadtools")  # captured by its `capture` script


def data(name):
    return os.path.join(DATA, name)


def read(name):
    with open(data(name)) as f:
        return f.read()
