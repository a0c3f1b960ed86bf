"""pjsua2 built from pinned pjproject source with the agent's config_site.h (`python -m agent.sip.pjproject`)."""
