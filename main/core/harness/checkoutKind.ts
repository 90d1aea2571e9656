// Issue #36: what kind of checkout new sessions get (settings.json `checkouts.kind`: auto, copy, view), what this
// machine supports (the overlay probe, kept in the home for a day) and why: what Settings → Checkout storage shows and
// sets. A session's existing checkouts keep the kind they were made with.
import path from 'node:path';
import { AUTO_CHECKOUT_KIND, viewSupport, type CheckoutKindSetting } from '../persistent/viewHolder.js';
import { readSettings, writeSettings } from '../../store/settings.js';

/** The checkout kind as Settings shows it. */
export type CheckoutKindReport = {
  /** settings.json's `checkouts.kind`. */
  setting: CheckoutKindSetting;
  /** `KEEL_CHECKOUT_KIND` in Keel's environment, which overrides the setting; absent when unset. */
  forced?: CheckoutKindSetting;
  /** What `auto` means in this version of Keel. */
  auto: 'copy' | 'view';
  /** Whether this machine can give a checkout a copy-on-write view, and the probe's sentence why (not). */
  support: { available: boolean; reason: string };
  /** What a new session's checkout of a git repository will be. */
  newSessions: 'copy' | 'view';
  /** One sentence saying why, for people. */
  explanation: string;
};

const KINDS: readonly string[] = ['auto', 'copy', 'view'];

/** The setting, what overrides it, the machine's answer and the kind new sessions get (probes once per process). */
export async function checkoutKindReport(home: string): Promise<CheckoutKindReport> {
  const setting = readSettings(home).checkouts.kind;
  const env = process.env['KEEL_CHECKOUT_KIND'];
  const forced = env !== undefined && KINDS.includes(env) ? (env as CheckoutKindSetting) : undefined;
  const asked = forced ?? setting;
  const wanted = asked === 'auto' ? AUTO_CHECKOUT_KIND : asked;
  // The probe's scratch folder is on the file system of the sessions' checkouts (the home); the answer is kept in
  // the home's overlay-probe.json, where Checkout.open reads it.
  const support = await viewSupport(path.join(home, 'overlay-probe'), path.join(home, 'overlay-probe.json'));
  const newSessions = wanted === 'view' && support.available ? 'view' : 'copy';
  const because =
    forced !== undefined
      ? `KEEL_CHECKOUT_KIND=${forced} in Keel's environment overrides the setting`
      : asked === 'auto'
        ? `Automatic is a ${AUTO_CHECKOUT_KIND === 'view' ? 'copy-on-write view where this machine can' : 'full copy in this version of Keel'}`
        : `the setting asks for a ${asked === 'view' ? 'copy-on-write view' : 'full copy'}`;
  const explanation =
    newSessions === 'view'
      ? `New sessions get a copy-on-write view of their project: ${because}.`
      : wanted === 'view'
        ? `New sessions get a full copy of their project: ${because}, but this machine cannot give one (${support.reason}).`
        : `New sessions get a full copy of their project: ${because}.`;
  return {
    setting,
    ...(forced !== undefined ? { forced } : {}),
    auto: AUTO_CHECKOUT_KIND,
    support,
    newSessions,
    explanation,
  };
}

/** Saves `checkouts.kind` in settings.json (the rest of the file as it is) and reports what new sessions get. */
export async function setCheckoutKind(home: string, kind: CheckoutKindSetting): Promise<CheckoutKindReport> {
  const current = readSettings(home);
  writeSettings(home, { ...current, checkouts: { ...current.checkouts, kind } });
  return checkoutKindReport(home);
}
