"""Containers for the agent: Docker Engine reached or started, a Debian base image made from Debian's own archive
when no registry image can be pulled, and the machine's package settings (pip's index, its CA bundle) handed to a
build or a container without being written into either."""
