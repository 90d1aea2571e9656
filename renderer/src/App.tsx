import type { JSX } from 'react';

/** The application shell; screens arrive with the desktop-app work. */
export function App(): JSX.Element {
  return (
    <main>
      <h1>Keel</h1>
      <p>Sessions will appear here.</p>
    </main>
  );
}
