/** The approvals panel moved to screens/approvals; this name stays until every importer uses the new path. */
export { ApprovalPanel } from '../approvals/ApprovalPanel.js';
