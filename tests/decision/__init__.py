"""Tests of decision."""
