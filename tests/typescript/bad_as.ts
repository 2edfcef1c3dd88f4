let y = x as;
