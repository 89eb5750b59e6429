// The browser has no file system: SentencePiece's load(path) is Node-only; the page loads bytes it fetched.
export function readFileSync() {
  throw new Error("no file system in a browser: load the model from its bytes");
}
