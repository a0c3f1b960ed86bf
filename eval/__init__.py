"""Benchmarks and evaluations: retrieval, ASR, and real SIP call replay."""
