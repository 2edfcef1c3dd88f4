enum E { A B }
