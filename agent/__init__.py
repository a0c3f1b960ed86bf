"""An offline telephone voice agent: SIP in, grounded spoken answers out."""

__version__ = "0.1.0"
