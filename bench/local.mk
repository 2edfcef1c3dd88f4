# bench: see the stage's header comments.
