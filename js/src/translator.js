// An nmt ONNX package of a SentencePiece model, translated with no Python: read and check model.json, tokenize
// with sentencepiece.model (SentencePiece's C++ library compiled to WebAssembly), search (./search.js) over
// the graphs, detokenize. The same code runs in Node (./node.js gives it files and onnxruntime-node) and in a
// browser (../web/ gives it fetch() and onnxruntime-web). docs/export.md: "A consumer in another language".
import { SentencePieceProcessor } from "@sctg/sentencepiece-js";
import { OrtBackend } from "./backend.js";
import { EOS, UNK, beamSearch, greedy } from "./search.js";

export class PackageError extends Error {}

// The session settings of nmt/runtime/session.py, so that the graphs compute what Python's do: no spinning
// threads, and no SkipLayerNormFusion (whose fused kernel rounds int8 graphs' sums differently).
export const SESSION_CONFIG = {
  session: { intra_op: { allow_spinning: "0" } },
  optimization: { disable_specified_optimizers: "SkipLayerNormFusion" },
};

const FORMAT = "nmt-onnx", FORMAT_VERSION = 2;
// Python's str.split() whitespace, which nmt.text.tokenizer.normalize collapses (JS's \s differs)
const WHITESPACE = /[\t\n\v\f\r \x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/g;

export function normalize(text) {
  return text.replace(WHITESPACE, " ").replace(/^ | $/g, "");
}

async function sha256(bytes) {
  const digest = await globalThis.crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

function toBase64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

/** model.json of `where`, checked: an nmt ONNX package of a SentencePiece model, else a PackageError saying what to do. */
export function checkCard(card, where) {
  const remedy = "pass the models/onnx folder the export stage wrote from a model trained with vocab.kind: sentencepiece";
  if (card === null || typeof card !== "object") throw new PackageError(`${where}: model.json is not a JSON object; ${remedy}`);
  if (card.format === "nmt-ctranslate2") {
    throw new PackageError(`${where} is a CTranslate2 model folder (models/ct2), which needs CTranslate2; ` +
      `this consumer runs the ONNX package: ${remedy}`);
  }
  if (card.format !== FORMAT || card.format_version !== FORMAT_VERSION) {
    throw new PackageError(`${where}: model.json says format ${JSON.stringify(card.format)} version ` +
      `${card.format_version}, not ${FORMAT} ${FORMAT_VERSION}; ${remedy}`);
  }
  if (card.vocab?.kind !== "sentencepiece") {
    throw new PackageError(`${where}: this package tokenizes with spaCy and BPE pieces (vocab.kind ` +
      `${JSON.stringify(card.vocab?.kind)}), which have no JavaScript implementation; train the model with ` +
      "vocab.kind: sentencepiece (params.yaml) and export it again");
  }
  return card;
}

export class Translator {
  /** Open a package through `files` ({text(name), bytes(name)}), with an ONNX Runtime binding `ort`.
   *  options: int8 (the quantised graphs), beamSize and alpha (default: the card's), sessionOptions (ONNX
   *  Runtime's; SESSION_CONFIG is laid under their `extra`, so every consumer runs Python's settings). */
  static async open(files, ort, where, options = {}) {
    let card;
    try {
      card = JSON.parse(await files.text("model.json"));
    } catch (err) {
      throw new PackageError(`${where}: no readable model.json (${err.message}): not an nmt ONNX package; ` +
        "pass the models/onnx folder the export stage wrote");
    }
    checkCard(card, where);
    const kind = options.int8 ? "int8" : "fp32";
    const graphs = card.graphs[kind];
    if (!graphs) throw new PackageError(`${where}: the package has no ${kind} graphs; export it with export.quantize: true`);
    const bytes = {};
    for (const name of [graphs.encoder.file, graphs.decoder_step.file, card.vocab.src.file, card.vocab.tgt.file,
      card.vocab.sentencepiece.file, card.tokenizer]) {
      const data = await files.bytes(name);
      if (card.files?.[name] !== await sha256(data)) {
        throw new PackageError(`${where}/${name}: SHA-256 differs from the one model.json records: the file was ` +
          "changed or comes from another export; copy the whole folder again");
      }
      bytes[name] = data;
    }
    const decoder = new TextDecoder();
    const vocab = (name) => decoder.decode(bytes[name]).split("\n").filter((line, i, all) => i < all.length - 1 || line);
    const sp = new SentencePieceProcessor();
    await sp.loadFromB64StringModel(toBase64(bytes[card.vocab.sentencepiece.file]));
    const given = options.sessionOptions ?? {};
    const sessionOptions = { ...given, extra: { ...SESSION_CONFIG, ...(given.extra ?? {}) } };
    const session = (name) => ort.InferenceSession.create(bytes[name], sessionOptions);
    const backend = new OrtBackend(ort, await session(graphs.encoder.file), await session(graphs.decoder_step.file), card);
    const tokenizer = JSON.parse(decoder.decode(bytes[card.tokenizer]));
    return new Translator(card, tokenizer, sp, vocab(card.vocab.src.file), vocab(card.vocab.tgt.file), backend, options);
  }

  constructor(card, tokenizer, sp, srcVocab, tgtVocab, backend, options) {
    this.card = card;
    this.lowercase = Boolean(tokenizer.lowercase); // tokenizer.json: text is lowercased before SentencePiece
    this.sp = sp;
    this.stoi = new Map(srcVocab.map((piece, i) => [piece, i]));
    this.tgtSize = tgtVocab.length;
    this.backend = backend;
    this.beamSize = options.beamSize ?? card.decoding.beam_size;
    this.alpha = options.alpha ?? card.decoding.alpha;
    this.maxExtra = card.decoding.max_extra;
    this.batchSize = options.batchSize ?? 64;
  }

  /** Source ids of a line: normalized, SentencePiece pieces, their src.vocab ids, then </s>; cut to max_source. */
  sourceIds(line) {
    let text = normalize(line);
    if (this.lowercase) text = text.toLowerCase();
    if (!text) return [];
    const ids = this.sp.encodePieces(text).map((p) => this.stoi.get(p) ?? UNK);
    ids.push(EOS);
    const max = this.card.decoding.max_source;
    return ids.length > max ? [...ids.slice(0, max - 1), EOS] : ids;
  }

  /** Output ids per line ([] for an empty line): lines sorted by length and decoded batchSize at a time, as
   *  nmt.decode.lines.LineTranslator does, so each batch is the one Python decodes. */
  async translateIds(lines) {
    const sources = lines.map((l) => this.sourceIds(l));
    const order = sources.map((_, i) => i).filter((i) => sources[i].length).sort((a, b) => sources[a].length - sources[b].length);
    const out = lines.map(() => []);
    for (let start = 0; start < order.length; start += this.batchSize) {
      const rows = order.slice(start, start + this.batchSize);
      const batch = rows.map((i) => sources[i]);
      const hyps = this.beamSize === 1 ? await greedy(this.backend, batch, this.maxExtra)
        : await beamSearch(this.backend, batch, this.beamSize, this.alpha, this.maxExtra);
      rows.forEach((i, j) => { out[i] = hyps[j]; });
    }
    return out;
  }

  /** One translation per line; an empty line stays empty. */
  async translate(lines) {
    const ids = await this.translateIds(lines);
    return ids.map((hyp) => (hyp.length ? this.sp.decodeIds(Int32Array.from(hyp)) : ""));
  }
}
