/** A URL slug: lower case words joined by single dashes. */
export function slugify(text) {
  return text.toLowerCase().replace(/[^a-z0-9]+/g, '-');
}

/** Each word with a capital first letter. */
export function titleCase(text) {
  return text
    .split(' ')
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join(' ');
}
