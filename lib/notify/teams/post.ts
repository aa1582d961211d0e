import { classifyJsonErrorAnswer } from '../../chat/post-json.js';

/**
 * Reduces a Workflows webhook's answer to an outcome. 202 means only that the flow run was
 * queued: a card the flow cannot post shows in the flow's run history, never here. Errors
 * come as `{"error":{"code":"WorkflowTriggerIsNotEnabled",…}}`; the code becomes the reason
 * (`workflow_trigger_is_not_enabled`: the flow is off, an operator must act).
 */
export const classifyTeamsAnswer = classifyJsonErrorAnswer('code');
