"""Tests of probability."""
