abstract class K<T> extends Base<T> implements I, J<T> {
  private readonly x: number = 1;
  protected abstract y(): void;
  static z?: string;
  declare w: number;
  #p!: number;
  override q = 2;
  accessor acc = 3;
  public static async *gen(): AsyncGenerator<number> {}
  [key: string]: any;
  constructor(private a: string, public readonly b?: number, @inject() c: C = d) { super(); }
  get v(): number { return 1 }
  set v(n: number) {}
  m<U>(this: K<T>, u: U): U;
  m(u: any) { return u }
  opt?(): void;
  static { init(); }
}
@dec() class Dd { @prop x = 1; @a.b(c) method(@inj a: string) {} }
@sealed export class Ex {}
export @sealed class Ex2 {}
class Gen<T = string, const U extends readonly unknown[] = []> {}
