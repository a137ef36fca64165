"""Small internal helpers shared by every layer (no public API here)."""
