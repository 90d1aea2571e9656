import { contextBridge, ipcRenderer } from 'electron';
import { exposeKeelApi } from './api.js';

// The whole preload: window.keel, one function per contract channel plus subscribe. ipcRenderer stays here.
exposeKeelApi(contextBridge, ipcRenderer);
