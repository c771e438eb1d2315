// The package ships no types; these are the two functions it exports.
declare module 'cluster-key-slot' {
  /** The cluster hash slot (0–16383) of a key, honouring a `{hash tag}`. */
  function generate(key: string | Buffer): number;
  namespace generate {
    /** The one slot of all `keys`, or -1 when they span several. */
    function generateMulti(keys: (string | Buffer)[]): number;
  }
  export = generate;
}
