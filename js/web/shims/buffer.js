// The one Buffer call SentencePiece makes (loadFromB64StringModel): base64 to bytes.
export const Buffer = {
  from(text, encoding) {
    if (encoding !== "base64") throw new Error(`Buffer.from(..., ${encoding}): only base64 in this shim`);
    return Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
  },
};
