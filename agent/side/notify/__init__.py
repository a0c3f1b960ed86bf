"""Telling the owner: events for a message left, a question declined and a transfer that failed, delivered from
a durable outbox to a signed webhook and by e-mail, with a daily digest of unanswered questions.

events.py builds the events (pure), outbox.py keeps them on disk and hands them to one courier per channel,
in order, retried with back-off; webhook.py and mail.py are the two channels; config.py reads their settings.
"""
