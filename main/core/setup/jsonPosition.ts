/*
 * Where JSON text stops being JSON. Node 20's JSON.parse says what it met but not always where, and a person
 * fixing a settings file needs the line.
 */

/** The offset of the first character at which `text` fails to be one JSON value, or -1 when it is JSON. Pure. */
export function jsonErrorOffset(text: string): number {
  let at = 0;
  const fail = (): never => {
    throw new JsonStop(at);
  };
  const space = (): void => {
    while (at < text.length && ' \t\n\r'.includes(text[at] as string)) at++;
  };
  const literal = (word: string): void => {
    for (const char of word) {
      if (text[at] !== char) fail();
      at++;
    }
  };
  const string = (): void => {
    at++;
    while (at < text.length) {
      const char = text[at] as string;
      if (char === '"') return void at++;
      if (char.charCodeAt(0) < 0x20) fail();
      if (char === '\\') {
        at++;
        const escape = text[at];
        if (escape === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(at + 1, at + 5))) fail();
          at += 4;
        } else if (escape === undefined || !'"\\/bfnrt'.includes(escape)) fail();
      }
      at++;
    }
    fail();
  };
  const number = (): void => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(at));
    if (!match) fail();
    at += (match as RegExpExecArray)[0].length;
  };
  const value = (): void => {
    space();
    const char = text[at];
    if (char === '{') {
      at++;
      space();
      if (text[at] === '}') return void at++;
      for (;;) {
        space();
        if (text[at] !== '"') fail();
        string();
        space();
        if (text[at] !== ':') fail();
        at++;
        value();
        space();
        if (text[at] === ',') at++;
        else if (text[at] === '}') return void at++;
        else fail();
      }
    }
    if (char === '[') {
      at++;
      space();
      if (text[at] === ']') return void at++;
      for (;;) {
        value();
        space();
        if (text[at] === ',') at++;
        else if (text[at] === ']') return void at++;
        else fail();
      }
    }
    if (char === '"') return string();
    if (char === 't') return literal('true');
    if (char === 'f') return literal('false');
    if (char === 'n') return literal('null');
    return number();
  };
  try {
    value();
    space();
    return at < text.length ? at : -1;
  } catch (error) {
    if (error instanceof JsonStop) return error.offset;
    throw error;
  }
}

class JsonStop extends Error {
  constructor(readonly offset: number) {
    super(`not JSON at ${offset}`);
  }
}
