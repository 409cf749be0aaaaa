// The rows store.ts reads, timestamps already in the wire format (db/timestamps.ts).
import type { StaffAction } from './schemas.ts';

/** A cfh_requests row, as the record (C0, C4) is made from. */
export interface RequestRow {
  id: number;
  device_id: number | null;
  is_claimed: boolean;
  claimed_at: string | null;
  claimed_by: string | null;
  organization_id: number;
  location_id: number;
  option_id: number;
  created_at: string;
  updated_at: string;
  chat_channel_id: string | null;
  message_id: string;
  is_timeout: boolean;
  timeout_at: string | null;
  is_closed: boolean;
  closed_at: string | null;
  is_on_the_way: boolean;
  staff_on_the_way_at: string | null;
  completed_at: string | null;
  is_completed: boolean;
  completion_reason: string | null;
  is_canceled: boolean;
  customer_canceled_at: string | null;
  display_id: number | null;
  callbutton_id: number | null;
  source: 'api' | 'call_button' | 'display';
  is_escalated: boolean;
  escalated_at: string | null;
  /** C7 only: its option's staff_action. */
  staff_action?: StaffAction;
}

/** A request and its option, as the status view (C5) is made from. */
export interface StatusRow {
  request_id: number;
  device_id: number | null;
  location_id: number;
  organization_id: number;
  message_id: string;
  option_id: number;
  is_claimed: boolean;
  claimed_at: string | null;
  claimed_by: string | null;
  created_at: string;
  updated_at: string;
  is_timeout: boolean;
  timeout_at: string | null;
  is_closed: boolean;
  closed_at: string | null;
  is_on_the_way: boolean;
  staff_on_the_way_at: string | null;
  is_completed: boolean;
  is_canceled: boolean;
  customer_canceled_at: string | null;
  option_text_en: string;
  option_text_fr: string;
  option_prompt_en: string;
  option_prompt_fr: string;
  option_organization_id: number;
  option_location_id: number | null;
  option_created_at: string;
  option_updated_at: string;
  source: 'api' | 'call_button' | 'display';
  is_escalated: boolean;
  escalated_at: string | null;
  chat_channel_id: string | null;
  custom_text: string | null;
  staff_name_format: 'full' | 'first' | 'generic';
  language: 'en' | 'fr';
  /** The location's name: what the customer's page calls the store. */
  store_name: string;
  /** Section 19: whether it must be scanned before a person completes it, and when it was. */
  require_scan: boolean;
  employee_arrived_at: string | null;
}
