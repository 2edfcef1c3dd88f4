//! Written for gramask's tests: the hard parts of rust.lark in one file
//! (tests/rust_trace.sh decodes it token by token).
#![allow(dead_code)]

use std::collections::{HashMap, HashSet};
use std::fmt::{self, Display};

/* a /* nested /* three */ deep */ comment */

/// A doc comment on an item.
#[derive(Debug, Clone)]
pub struct Holder<'a, T: Clone + 'a> {
    items: Vec<Vec<&'a T>>,
    index: HashMap<String, Vec<Option<Box<dyn Fn(u8) -> Vec<u8>>>>>,
}

impl<'a, T> Holder<'a, T>
where
    T: Clone + Display + 'a,
    for<'b> &'b T: IntoIterator,
{
    pub fn new() -> Self {
        Holder { items: Vec::new(), index: HashMap::new() }
    }

    fn chars(&self) -> (char, char, char, char) {
        ('a', '\'', '\u{1F600}', '"')
    }

    fn raw(&self) -> (&'static str, &'static [u8]) {
        (r#"a "quoted" word"#, br##"a "# inside"##)
    }
}

macro_rules! square {
    ($x:expr) => { $x * $x };
    ($($x:expr),+ $(,)?) => { [$(square!($x)),+] };
}

async fn fetch(x: u32) -> Result<u32, String> {
    let y = async move { x + 1 }.await;
    Ok(y)
}

fn shapes(v: &[i64], t: (u8, (u8, u8))) -> i64 {
    let mut total = 0;
    'outer: for i in 0..v.len() {
        let w = &v[i + 1..];
        match v[i] {
            0..=9 => total += 1,
            -5..=-1 | 100 => {}
            n if n > 1000 => break 'outer,
            _ => continue 'outer,
        }
        total += w.len() as i64;
    }
    let f = |a: i64, b| -> i64 { a + b };
    let g = move || total;
    let seen: HashSet<_> = v.iter().map(|&x| x >> 2).filter(|x| (*x as u32) < 7).collect();
    if let Some(&x) = v.first() { total += x; } else if t.1.0 > 2 { total -= 1; }
    f(total, g()) + square!(2) + seen.len() as i64 + t.0 as i64
}

fn show(x: &impl Display) -> impl Fn() -> String + '_ {
    move || format!("{}", x)
}

impl fmt::Display for Holder<'_, u8> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.items.len())
    }
}
