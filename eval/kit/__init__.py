"""What the eval runners share: callers, the agent as a process, cases, scoring, ports, reports."""
