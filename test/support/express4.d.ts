/** Express 4, installed as "express4" (npm:express@^4) beside Express 5: typed with Express 5's types, enough for the tests. */
declare module "express4" {
  import express from "express";
  export default express;
}
