"""Store-wide full-text search: the query language, what is indexed, and the SQLite FTS5 index.

``query`` parses what a person types, ``tokens`` is the one tokenizer,
``extract`` says which files hold searchable text and reads it (through the
models where a file has structure), ``index`` keeps the index in the user's
cache folder and answers queries. The ``okstra search`` verb and the
workbench's Search view both use it. Importing this package loads nothing.
"""
