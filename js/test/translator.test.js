// node --test test/ (npm test): the parts of the consumer that need no model. The whole consumer against
// Python on a trained package: tests/export/test_javascript.py.
import assert from "node:assert/strict";
import { test } from "node:test";
import { PackageError, checkCard, normalize } from "../src/translator.js";
import { beamSearch, greedy, lengthPenalty } from "../src/search.js";

test("normalize collapses what Python's str.split() splits on, not JavaScript's \\s", () => {
  assert.equal(normalize("\u00a0 Ein\tMann\u3000\u2003schläft.\x1c "), "Ein Mann schläft.");
  assert.equal(normalize("a\ufeffb"), "a\ufeffb"); // U+FEFF: \s in JavaScript, not whitespace to Python
});

test("a package this consumer cannot run is refused in one line naming the fix", () => {
  assert.throws(() => checkCard({ format: "nmt-ctranslate2" }, "models/ct2"), /CTranslate2 model folder/);
  assert.throws(() => checkCard({ format: "nmt-onnx", format_version: 2, vocab: { kind: "bpe" } }, "p"),
    /vocab.kind: sentencepiece/);
  assert.throws(() => checkCard({ format: "nmt-onnx", format_version: 1 }, "p"), PackageError);
});

// A backend whose step scores are a fixed table: token scores depend on the step only.
function tableBackend(table, maxLen = 64) {
  return {
    maxLen,
    async encode() {},
    keep() {},
    async step(tokens, rows, K) {
      const t = (this.t = (this.t ?? -1) + 1), row = table[Math.min(t, table.length - 1)];
      const order = row.map((_, i) => i).sort((a, b) => row[b] - row[a] || a - b).slice(0, 2 * K);
      const b = tokens.length / K, logp = new Float32Array(b * K * 2 * K), ids = new BigInt64Array(b * K * 2 * K);
      for (let r = 0; r < b * K; r++) order.forEach((id, j) => { logp[r * 2 * K + j] = row[id]; ids[r * 2 * K + j] = BigInt(id); });
      return { logp, ids };
    },
  };
}

test("greedy takes the best token until </s>; beam search ranks by GNMT's length penalty", async () => {
  const table = [[-9, -9, -9, -2, -0.1], [-9, -9, -9, -0.05, -3]]; // step 0: token 4, then </s> (3)
  assert.deepEqual(await greedy(tableBackend(table), [[4, 3]], 50), [[4]]);
  assert.deepEqual(await beamSearch(tableBackend(table), [[4, 3]], 2, 0.6, 50), [[4]]);
  assert.equal(lengthPenalty(1, 1), 1);
});
