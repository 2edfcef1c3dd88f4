def f():
    match x:
        case [1, *r]: return r