"""Tests of elicitation."""
