"""The application's HTTP edge, independent of any server framework.

``HttpApi`` turns a parsed request (``Incoming``) into a complete response
(``Reply``): request ids, write auth, JSON, validation, problem bodies and
request metrics. The route table, the problem mapping and the OpenAPI document
live here too, so every server adapter (``interpreters/http``) is a thin
translation of its framework's request and response, and all answer alike.
"""
