type A = B<C<D>>>;
