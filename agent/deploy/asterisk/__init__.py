"""The bundled Asterisk, built from Debian's pinned source (build.py, source.toml)."""
