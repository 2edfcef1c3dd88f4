class A {
  #x = 1;
  m(o: object) { return #x inr; }
}
