// Vite's `?worker` imports: the default export constructs the bundled worker (served from 'self', no blob: URL).
declare module '*?worker' {
  const WorkerFactory: new (options?: { name?: string }) => Worker;
  export default WorkerFactory;
}
