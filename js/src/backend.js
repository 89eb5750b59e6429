// The encoder and decoder-step graphs as a search backend (./search.js), on any ONNX Runtime JavaScript
// binding: onnxruntime-node in Node, onnxruntime-web (WebAssembly) in a browser. The graphs' contract is
// docs/export.md's table: the decoder step reorders its caches by `rows` and returns each row's 2K best
// next tokens, so only (n, K, 2K) numbers come back per step.

/** Rows `keep` (indices along axis 0) of a tensor, as a new tensor. */
function takeRows(ort, tensor, keep) {
  const [n, ...rest] = tensor.dims;
  const size = rest.reduce((a, b) => a * b, 1);
  const data = new tensor.data.constructor(keep.length * size);
  keep.forEach((row, i) => { data.set(tensor.data.subarray(row * size, (row + 1) * size), i * size); });
  if (n < keep.length) throw new Error("takeRows: more rows kept than there are");
  return new ort.Tensor(tensor.type, data, [keep.length, ...rest]);
}

export class OrtBackend {
  /** `encoder`, `decoder`: InferenceSessions of the card's graphs; `card`: the package's model.json. */
  constructor(ort, encoder, decoder, card) {
    this.ort = ort;
    this.encoder = encoder;
    this.decoder = decoder;
    this.maxLen = card.model.max_len;
    const { H, Dh } = card.model;
    this.crossNames = encoder.outputNames.slice();
    this.pastNames = decoder.inputNames.filter((n) => n.startsWith("self_"));
    // (rows, H, Dh, t) keys and (rows, H, t, Dh) values, t = 0 before the first step
    this.empty = this.pastNames.map((n) => (n.startsWith("self_k_") ? [H, Dh, 0] : [H, 0, Dh]));
  }

  async encode(src) {
    const { ort } = this;
    const input = new ort.Tensor("int64", src.data, src.dims);
    const out = await this.encoder.run({ src: input });
    this.cross = this.crossNames.map((n) => out[n]);
    const mask = new Uint8Array(src.data.length);
    src.data.forEach((id, i) => { mask[i] = id !== 0n ? 1 : 0; });
    this.srcMask = new ort.Tensor("bool", mask, src.dims);
    this.past = null;
  }

  async step(tokens, rows, K) {
    const { ort } = this;
    const b = tokens.length / K;
    if (this.past === null) {
      this.past = this.empty.map((shape) => new ort.Tensor("float32", new Float32Array(0), [tokens.length, ...shape]));
    }
    const feeds = {
      tokens: new ort.Tensor("int64", BigInt64Array.from(tokens, BigInt), [b, K]),
      rows: new ort.Tensor("int64", BigInt64Array.from(rows, BigInt), [b, K]),
      src_mask: this.srcMask,
    };
    this.pastNames.forEach((n, i) => { feeds[n] = this.past[i]; });
    this.crossNames.forEach((n, i) => { feeds[n] = this.cross[i]; });
    const out = await this.decoder.run(feeds);
    this.past = this.pastNames.map((n) => out[`new_${n}`]);
    return { logp: out.log_probs.data, ids: out.ids.data };
  }

  keep(sentences) {
    this.srcMask = takeRows(this.ort, this.srcMask, sentences);
    this.cross = this.cross.map((c) => takeRows(this.ort, c, sentences));
  }
}
