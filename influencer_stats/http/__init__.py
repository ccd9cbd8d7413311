"""The application's HTTP edge, independent of any server framework.

``HttpApi`` (``api``) turns a parsed request (``Incoming``) into a complete
response (``Reply``): request ids, write auth, JSON, validation, problem bodies
(``problems``) and request metrics. ``bootstrap.edge.ROUTES`` (the core's
``routes`` and each slice's ``RouteGroup``) is the one route table
(templates, methods, handlers); ``body.read_bounded`` the one bounded body
reader (``read_request_body`` for requests: a body cut short raises
``BodyIncomplete``); ``openapi`` describes the table. Every server adapter
(``influencer_stats.servers``) is a thin translation of its framework's request and
response, so all answer alike.
"""
