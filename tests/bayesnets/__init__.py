"""Tests of bayesnets."""
