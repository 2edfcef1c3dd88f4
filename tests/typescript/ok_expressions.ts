function f(a: number, b = 2, ...rest: string[]): a is number { return true }
function g(x: unknown): asserts x is string {}
const h = (a: number, b?: string): Promise<void> => {};
const h2 = (a, b: string) => a;
const h3 = (a?) => a;
const h4 = ({ a, b }: Props, [c]: number[] = []): number => a;
const h5 = (...args: any[]): void => {};
const h6 = (): string => "";
const h8 = (x: number): (y: number) => number => (y) => x + y;
const i = async (x: number) => x;
const i2 = async (a, b: string): Promise<void> => {};
const j = <T,>(x: T) => x;
const j2 = <T extends object>(x: T): T => x;
let k = x as unknown as string[];
let k2 = x as A | B;
let k3 = x as A & B;
let k4 = (x as any).y;
let l = y satisfies Record<string, number>;
let m = z!.foo!.bar![0]!;
let n = { a: 1 } as const;
let o = new Map<string, number>();
let o2 = new Set;
let p = a < b && c > d;
let q = c ? (a) : b;
let r = cond ? x as number : 0;
for (const [key, value] of Object.entries(obj)) {}
try {} catch (e: unknown) {}
let s = `t${a as number}`;
let u = a >> b >>> c;
let v = cb(function (this: Window, e: Event): void {});
let w: A<B<C>> = new X<Y<Z>>();
