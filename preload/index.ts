import { contextBridge } from 'electron';

// The bridge grows with main/ipc/contract.ts; it never exposes ipcRenderer itself.
contextBridge.exposeInMainWorld('keel', { version: '0.1.0' });
