type X = (A | B) => K;
