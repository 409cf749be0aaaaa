-- A request's call button and display are of its own location (and so of its organization): the
-- database holds it with composite keys, so no statement can join a request to another tenant's
-- device. A request an earlier release let name another location's button or display forgets it.
CREATE UNIQUE INDEX call_buttons_id_location ON call_buttons (id, location_id);
CREATE UNIQUE INDEX cfh_displays_id_location ON cfh_displays (id, location_id);
UPDATE cfh_requests r SET callbutton_id = NULL
WHERE callbutton_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM call_buttons b WHERE b.id = r.callbutton_id AND b.location_id = r.location_id);
UPDATE cfh_requests r SET display_id = NULL
WHERE display_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM cfh_displays d WHERE d.id = r.display_id AND d.location_id = r.location_id);
ALTER TABLE cfh_requests
  ADD CONSTRAINT cfh_requests_callbutton FOREIGN KEY (callbutton_id, location_id) REFERENCES call_buttons (id, location_id),
  ADD CONSTRAINT cfh_requests_display FOREIGN KEY (display_id, location_id) REFERENCES cfh_displays (id, location_id);
