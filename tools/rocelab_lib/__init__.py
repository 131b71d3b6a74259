"""rocelab: whole fabrics from one scenario file, in rocesim or real processes (doc/rocelab.md)."""
