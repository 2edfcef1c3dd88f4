import type { A, B } from "./x";
import { type C, D as E } from 'y';
import type Def from "z";
import * as ns from "w";
import fs = require("fs");
import Alias = ns.inner.Thing;
export type { A };
export type * from "./all";
export = foo;
export as namespace MyLib;
interface Foo<T extends object = {}> extends Bar<T>, Baz.Qux {
  readonly a: string;
  b?: number
  c(x: number, y?: string): void;
  [key: string]: unknown;
  new (x: T): Foo<T>;
  <U>(u: U): U
  get size(): number
  set size(v: number)
}
type Alias2<in out T> = T;
enum E1 { A = 1, B, C = "x", }
const enum E2 { X }
declare enum E3 { Y }
declare module "m" { export function f(): void; }
declare module "n";
declare global { interface Window { x: number } }
namespace NS.Inner { export const x = 1; }
module Legacy { }
declare const dc: number;
declare let dl: string, dm: boolean;
declare function df<T>(x: T): T;
declare class DC { m(): void; p: string }
export default interface Q {}
export declare abstract class R {}
function over(a: string): void
function over(a: number): void;
function over(a: any) {}
export function f2(this: Window, ...rest: number[]): void {}
