interface I { a: string b: number }
