# runtime: see the stage's header comments.
