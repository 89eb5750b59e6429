// Greedy and beam search over the decoder-step graph: nmt/decode/search.py and nmt/decode/hypotheses.py,
// line for line, so that Node and the browser decide exactly what Python decides (same float32 sums, same
// tie rule: among equal scores the lower position, and among finished hypotheses the one finished first).
//
// A backend (./backend.js) runs the graphs: encode(src) once, then step(tokens, rows) per position returns
// {logp: Float32Array, ids: BigInt64Array} of shape (n, K, 2K), best first; keep(sentences) drops finished
// sentences' source side. Vaswani et al. 2017, section 6.1: beam search with length penalty alpha; the output
// may be max_extra symbols longer than the source, capped by the model's positions.

export const PAD = 0, UNK = 1, BOS = 2, EOS = 3;

/** Right-pad id lists with <pad> into a (B, S) row-major BigInt64Array. */
export function padBatch(sources) {
  const S = Math.max(...sources.map((s) => s.length));
  const data = new BigInt64Array(sources.length * S);
  sources.forEach((s, i) => s.forEach((id, j) => { data[i * S + j] = BigInt(id); }));
  return { data, dims: [sources.length, S] };
}

function limits(sources, maxExtra, maxLen) {
  return sources.map((s) => Math.min(s.length + maxExtra, maxLen - 1));
}

/** Positions of the k largest of `x` (best first; ties: the lower position first, as a stable sort). */
function best(x, k) {
  const order = Array.from(x.keys());
  order.sort((a, b) => (x[a] > x[b] ? -1 : x[a] < x[b] ? 1 : a - b));
  return order.slice(0, k);
}

/** GNMT: ((5 + |Y|) / 6) ** alpha. */
export function lengthPenalty(length, alpha) {
  return ((5 + length) / 6) ** alpha;
}

/** Greedy decoding: one id list per source (no <s> / </s>). */
export async function greedy(backend, sources, maxExtra) {
  const B = sources.length;
  const limit = limits(sources, maxExtra, backend.maxLen);
  await backend.encode(padBatch(sources));
  let alive = Array.from({ length: B }, (_, i) => i);
  let tokens = alive.map(() => BOS);
  let rows = alive.slice();
  const out = sources.map(() => []);
  const steps = Math.max(...limit);
  for (let t = 0; t < steps; t++) {
    const { ids } = await backend.step(tokens, rows, 1);
    const next = alive.map((_, i) => Number(ids[i * 2])); // (n, 1, 2): the first candidate is the best
    alive.forEach((sent, i) => { if (next[i] !== EOS) out[sent].push(next[i]); });
    const goOn = [];
    alive.forEach((sent, i) => { if (next[i] !== EOS && t + 1 < limit[sent]) goOn.push(i); });
    if (goOn.length === 0) break;
    if (goOn.length < alive.length) backend.keep(goOn);
    alive = goOn.map((i) => alive[i]);
    tokens = goOn.map((i) => next[i]);
    rows = goOn;
  }
  return out;
}

/** Beam search: the best id list per source (no <s> / </s>); [] where nothing finished. */
export async function beamSearch(backend, sources, K, alpha, maxExtra) {
  const B = sources.length, W = 2 * K;
  const limit = limits(sources, maxExtra, backend.maxLen);
  await backend.encode(padBatch(sources));
  let alive = Array.from({ length: B }, (_, i) => i);
  let tokens = new Array(B * K).fill(BOS);
  let rows = Array.from({ length: B * K }, (_, i) => i);
  let prefix = alive.map(() => Array.from({ length: K }, () => [])); // (n, K, t)
  let scores = alive.map(() => Array.from({ length: K }, (_, k) => (k === 0 ? 0 : -Infinity)));
  const hyps = sources.map(() => []); // per sentence: [ranking score, ids], in the order they finished
  const steps = Math.max(...limit);
  for (let t = 0; t < steps; t++) {
    const { logp, ids } = await backend.step(tokens, rows, K);
    const penalty = lengthPenalty(t + 1, alpha);
    const goOn = [], nextScores = [], nextTokens = [], nextBeams = [];
    alive.forEach((sent, i) => {
      const cand = new Float32Array(K * W); // float32 sums, as numpy adds float32 arrays
      for (let k = 0; k < K; k++) for (let j = 0; j < W; j++) cand[k * W + j] = scores[i][k] + logp[(i * K + k) * W + j];
      const top = best(cand, W);
      const beams = top.map((p) => Math.floor(p / W));
      const toks = top.map((p) => Number(ids[i * K * W + p]));
      for (let r = 0; r < K; r++) {
        if (toks[r] === EOS) hyps[sent].push([cand[top[r]] / penalty, prefix[i][beams[r]].slice()]);
      }
      const open = top.map((p, r) => (toks[r] === EOS ? -Infinity : cand[p]));
      const order = best(open, K);
      const contScores = order.map((r) => open[r]), contBeams = order.map((r) => beams[r]);
      const contToks = order.map((r) => toks[r]);
      const atLimit = t + 1 >= limit[sent];
      if (atLimit) {
        for (let k = 0; k < K; k++) {
          if (contScores[k] > -Infinity) hyps[sent].push([contScores[k] / penalty, [...prefix[i][contBeams[k]], contToks[k]]]);
        }
      }
      if (!(atLimit || hyps[sent].length >= K)) {
        goOn.push(i);
        nextScores.push(contScores); nextTokens.push(contToks); nextBeams.push(contBeams);
      }
    });
    if (goOn.length === 0) break;
    if (goOn.length < alive.length) backend.keep(goOn);
    rows = goOn.flatMap((i, g) => nextBeams[g].map((b) => i * K + b)); // the row each continues
    prefix = goOn.map((i, g) => nextBeams[g].map((b, k) => [...prefix[i][b], nextTokens[g][k]]));
    alive = goOn.map((i) => alive[i]);
    scores = nextScores;
    tokens = nextTokens.flat();
  }
  return hyps.map((h) => {
    let chosen = null;
    for (const hyp of h) if (chosen === null || hyp[0] > chosen[0]) chosen = hyp; // strict: a tie keeps the first
    return chosen === null ? [] : chosen[1];
  });
}
