# spanner: see the stage's header comments.
